"""Built-in tools that run in the host (fetch_url, download, memory, artifacts), the page watcher
behind watch_page, and the page indicator's host side. See README.md."""
