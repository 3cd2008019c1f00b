"""kosti.datasets"""
