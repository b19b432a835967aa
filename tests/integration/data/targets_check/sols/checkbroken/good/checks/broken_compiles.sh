echo "meant to be broken, but it is valid shell"
