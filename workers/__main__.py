from agentrt.workers.main import main

main()
