"""The file formats behind ``disttorch.save``/``disttorch.load``.

``names``: PyTorch's dtype and storage names and how a pickle's global names resolve;
``unpickler``: the weights-only unpickler and the rebuild functions it admits;
``zip_writer``/``zip_reader``: PyTorch's zip format; ``legacy_reader``: PyTorch's
pre-1.6 format; ``dtck_reader``: disttorch's own earlier format; ``files``: atomic,
umask-respecting writes whose errors name the path.
"""
