# The MCP client against the official conformance suite: filled in next.
