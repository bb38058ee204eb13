"""``python -m disttorch.launcher ...`` runs disttorch-launch."""

import sys

from .main import main

sys.exit(main())
