from propeval.cli import main

main()
