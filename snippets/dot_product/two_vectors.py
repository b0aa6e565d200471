"""The dot product of two vectors measures how much they point the same way."""

# --8<-- [start:dot]
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"

cat = torch.tensor([1.0, 0.8, 0.1, 0.0], device=device)  # (4,): (d,)
dog = torch.tensor([0.9, 1.0, 0.0, 0.2], device=device)
car = torch.tensor([0.0, 0.1, 1.0, 0.9], device=device)

print(f"cat · dog = {torch.dot(cat, dog).item():.2f}")
print(f"cat · car = {torch.dot(cat, car).item():.2f}")
print(f"cat · cat = {torch.dot(cat, cat).item():.2f}")
# --8<-- [end:dot]

# --8<-- [start:cosine]
# a · b = |a| |b| cos(θ): divide out the lengths to keep only the angle
cos_cat_dog = torch.dot(cat, dog) / (cat.norm() * dog.norm())
cos_cat_car = torch.dot(cat, car) / (cat.norm() * car.norm())
print(f"cos(cat, dog) = {cos_cat_dog.item():.3f}")
print(f"cos(cat, car) = {cos_cat_car.item():.3f}")
# --8<-- [end:cosine]
