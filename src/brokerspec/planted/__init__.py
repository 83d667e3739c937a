"""Planted-bug fixtures: deliberately wrong implementations the checkers must catch."""
