"""kosti.dashboard"""
