from collperf.cli import main

main()
