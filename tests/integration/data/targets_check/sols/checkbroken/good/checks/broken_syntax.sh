if then fi (
