"""``python -m launcher ...`` runs disttorch-launch."""

import sys

from launcher.main import main

sys.exit(main())
