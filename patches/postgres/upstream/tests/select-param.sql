select $1 as x
