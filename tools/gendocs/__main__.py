"""``python -m tools.gendocs``: see :mod:`tools.gendocs`."""
import sys

from tools.gendocs import main

sys.exit(main())
