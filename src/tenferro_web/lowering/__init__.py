"""Pure lowering: plans plus an adapter profile become Programs of kernel launches, buffer copies
and clears over buffer slots. Every kernel decision lives here once, and every assumption a kernel
makes is checked where its launch is built."""
