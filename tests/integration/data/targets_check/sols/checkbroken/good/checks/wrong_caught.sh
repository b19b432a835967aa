echo "WRONG: caught by the judge"
