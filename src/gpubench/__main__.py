from gpubench.cli import main

raise SystemExit(main())
