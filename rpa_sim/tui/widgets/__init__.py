"""The dashboard's widgets, one module each: they draw what they are given and read neither the app nor its state."""
