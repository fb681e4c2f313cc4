"""Widgets the page API and the lessons draw with: the steps' parts, exercises, inputs, progress, lesson pieces."""
