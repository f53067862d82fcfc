from workers.main import main

main()
