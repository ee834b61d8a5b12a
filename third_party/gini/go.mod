module github.com/go-air/gini

go 1.16
