"""Local stand-ins for the chat-completions and Tavily servers, so tests never touch the network."""
