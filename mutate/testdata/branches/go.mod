module example.com/branches

go 1.26
