"""The OpenAI-compatible client, the local llama.cpp server, the judge and generation."""
