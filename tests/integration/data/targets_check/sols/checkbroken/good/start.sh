echo "a correct start"
