"""The workflow graph as inline SVG: `layout` places nodes in layers, `svg` draws them."""
