"""Runtime validation of trainflops' executed mode.

Small models run forward and backward in PyTorch under a dispatch mode that
counts the multiply-adds of every matrix product autograd executes
(counting.py); the counts must equal `trainflops count --mode executed`
integer for integer (run.py). README.md, "How we know the numbers are
right", says what the check covers.
"""
