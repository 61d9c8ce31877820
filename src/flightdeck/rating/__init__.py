"""Rating: the people's labels, the page that collects them, and their agreement."""
