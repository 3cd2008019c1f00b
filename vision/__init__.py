"""kosti.vision"""
