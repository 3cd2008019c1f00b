"""kosti.engine"""
