"""SASS: the machine IR, per-architecture instruction tables, encoder, decoder, printer."""
