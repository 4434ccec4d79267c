"""`python -m ptxc` is the `ptxc` command."""
import sys

from .cli import main

sys.exit(main())
