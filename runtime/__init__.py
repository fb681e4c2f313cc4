"""The server's machinery no page calls: warm-up, preloading, memory tuning, the collector, the browser store,
the process cache. lab.py and streamlit_app.py call it; ui/drawing.py and ui/models/ keep what they build in
runtime.cache; app_pages never import it (tests/test_imports.py)."""
