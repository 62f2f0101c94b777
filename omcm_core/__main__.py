from omcm_core._cli.cli import main

raise SystemExit(main())
