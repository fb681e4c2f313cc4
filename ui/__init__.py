"""Streamlit and Altair helpers shared by the pages: inputs (sidebar), charts, display."""
