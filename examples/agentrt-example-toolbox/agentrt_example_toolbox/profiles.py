"""The example's profiles written in Python: the same as profiles.yaml, for a worker run in
your own process, which then reads no profiles file:

    worker, resources = build_worker(client, settings, profiles=PROFILES)
"""

from agentrt import Profile

PROFILES = [
    Profile(
        name="shop",
        instructions="You take orders for the warehouse.",
        model="scripted:example",  # the scripted model, following rules.yaml
        toolboxes=["example"],  # every tool of the Python toolbox
        tools=["warehouse.shipping_quote", "warehouse.book_shipment"],  # MCP: server.tool
        approval="writes",  # place_order and book_shipment wait for a person
        max_iterations=8,
    ),
    Profile(
        name="echo",
        instructions="Say it back.",
        model="example:echo",  # the provider plug-in of this package
    ),
]
