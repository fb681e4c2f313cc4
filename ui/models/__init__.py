"""Handles of the models a lesson runs beyond the sidebar's input: all-MiniLM-L6-v2, SmolLM2, the lab's own runs."""
