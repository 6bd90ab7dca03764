"""Retrieval for in-context learning (the paper's Algorithm 2): an index of the kept examples
(BM25 over instructions and over observations, dense embeddings when the `dense` extra is
installed), built by a task, stored as memory-mapped files and swapped atomically; and the
query side that every web process shares."""
