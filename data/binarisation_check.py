"""Which class-vs-rest split did the paper use for vehicle, waveform and wine?

The paper reports bagging and single-CART accuracies for binary versions of these three
multi-class datasets without saying how they were binarised. This script measures both
accuracies for every one-vs-rest split (and for wpbc with and without its ``time``
column), so the choice in ``data/README.md`` can be checked. Run from the project root:

    PYTHONPATH=. python data/binarisation_check.py

About a minute on one core. Protocol: 20 stratified random splits, 80% train and the
paper's 10% test (the 10% validation part is not needed here), 100 bagged CART trees
(the paper uses 200), seeds 0-19.
"""

import numpy as np
from sklearn.ensemble import BaggingClassifier
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

from sdwec import datasets

PAPER = {"vehicle": (0.9670, 0.9634), "waveform": (0.8620, 0.8220), "wine": (0.9719, 0.9500),
         "wpbc": (0.7750, 0.6911)}
REPEATS = 20


def accuracies(X, y):
    bagging, single = [], []
    for seed in range(REPEATS):
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, train_size=0.8, test_size=0.1, stratify=y, random_state=seed)
        tree = DecisionTreeClassifier(random_state=seed)
        single.append(tree.fit(X_train, y_train).score(X_test, y_test))
        bag = BaggingClassifier(DecisionTreeClassifier(), n_estimators=100, random_state=seed)
        bagging.append(bag.fit(X_train, y_train).score(X_test, y_test))
    return np.mean(bagging), np.mean(single), np.std(bagging) / np.sqrt(REPEATS)


def main():
    print("dataset   positive        bagging (se)     single CART   paper bagging / single")
    for name in ("vehicle", "waveform", "wine"):
        ds = datasets.load(name, task="multiclass")
        for positive in ds.classes:
            y = np.where(ds.y == positive, 1, -1)
            bag, single, se = accuracies(np.asarray(ds.X), y)
            print(f"{name:9s} {str(positive):14s} {bag:.4f} ({se:.4f})  {single:.4f}"
                  f"        {PAPER[name][0]:.4f} / {PAPER[name][1]:.4f}")
    wpbc = datasets.load("wpbc", task="binary")
    for label, X in (("with time", wpbc.X), ("without time", wpbc.X[:, 1:])):
        bag, single, se = accuracies(np.asarray(X), wpbc.y)
        print(f"wpbc      {label:14s} {bag:.4f} ({se:.4f})  {single:.4f}"
              f"        {PAPER['wpbc'][0]:.4f} / {PAPER['wpbc'][1]:.4f}")


if __name__ == "__main__":
    main()
