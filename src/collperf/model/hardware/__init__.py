"""Hardware as parts: GPUs from their data sheets (parts.py, gpus.py), the names tools print for them
(names.py), the ways a node links its GPUs and the networks between nodes, and systems composed of them."""
