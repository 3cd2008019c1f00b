"""kosti.models"""
