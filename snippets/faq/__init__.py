"""FAQ (docs/faq.md): one small script per question that has code."""
