"""The server's machinery no page calls: warm-up, preloading, memory tuning, the collector, the browser store, the process cache."""
