echo start
