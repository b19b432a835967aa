echo "meant to be wrong, but the judge passes it"
