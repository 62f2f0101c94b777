from omcm_core.cli import main

raise SystemExit(main())
