"""FAQ (docs/faq.{zh,en}.md): one small script per question that has code."""
