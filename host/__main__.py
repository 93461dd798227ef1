"""`python -m host ...` is the same as the `tabwarden` console script."""

import sys

from host.cli.main import main

sys.exit(main())
