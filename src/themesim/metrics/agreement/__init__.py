"""Agreement of two or more coders (`themesim agree`, the coder's agreement): κ, α, the
unitizing α family, the multi-coder statistics, agreement across codebooks."""
