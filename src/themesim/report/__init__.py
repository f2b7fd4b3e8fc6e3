"""Plots, tables and the summary report."""
