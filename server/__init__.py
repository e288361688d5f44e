"""The engine as an MCP server (`deep-research mcp`): tools to start, watch and read runs."""
