"""What each step of a research run does: planning, worker steps, writing, reviewing; prompts."""
