from authoring.cli import main

main()
